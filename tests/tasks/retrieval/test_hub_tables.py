"""`vlbench data prepare BENCHMARK --source HUB_ID` on the hub datasets researchers pass, each
built locally with its real schema (column names and types, split names, a loading script, a
webdataset) and read through the real `datasets` code, as a hub id (the id mapped to the local
folder) and as a local folder. Image columns hold bytes that are not images: decoding one fails
the test."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import deviation_expected, karpathy_doc
from tests.harness.leaderboard.conftest import forbid_network
from vlbench.cli import main
from vlbench.errors import UsageError
from vlbench.registry import registry
from vlbench.tasks.captioning.loaders import References
from vlbench.tasks.retrieval.hub_tables import KNOWN_HUB_DATASETS, PARQUET_BRANCH

datasets = pytest.importorskip("datasets")
huggingface_hub = pytest.importorskip("huggingface_hub")
from datasets import Features, Image, Value  # noqa: E402

List = getattr(datasets, "List", datasets.Sequence)  # datasets 4 names a list feature `List`
NOT_AN_IMAGE = {"bytes": b"not image bytes: decoding them fails", "path": None}
REPO = Path(__file__).resolve().parents[3]


@pytest.fixture
def hub(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> dict[tuple[str, str | None], Path]:
    """Hub dataset ids served from local folders ({(repo id, revision): folder}); `datasets` runs
    its own code on them. No other network."""
    attempts = forbid_network(monkeypatch)
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "hf-cache"))
    repos: dict[tuple[str, str | None], Path] = {}
    real_builder, real_load = datasets.load_dataset_builder, datasets.load_dataset

    def local(path: str, revision: str | None) -> str:
        if (path, revision) in repos:
            return str(repos[(path, revision)])
        assert Path(path).exists(), f"the test reached for hub dataset {path}@{revision}"
        return path

    def builder(path: str, revision: str | None = None, **kwargs: Any) -> Any:
        return real_builder(local(path, revision), **kwargs)

    def load(path: str, revision: str | None = None, **kwargs: Any) -> Any:
        return real_load(local(path, revision), **kwargs)

    def no_json_file(**kwargs: Any) -> str:  # none of these repos holds dataset_*.json
        from huggingface_hub.errors import EntryNotFoundError

        raise EntryNotFoundError(f"{kwargs.get('filename')} not in {kwargs.get('repo_id')}")

    class Api:  # lists a repo's files (at a revision) as HfApi does
        def list_repo_files(self, repo_id: str, repo_type: str | None = None, revision: str | None = None) -> list[str]:
            folder = repos[(repo_id, revision)]
            return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())

    monkeypatch.setattr(datasets, "load_dataset_builder", builder)
    monkeypatch.setattr(datasets, "load_dataset", load)
    def json_files_only(repo_id: str, **kwargs: Any) -> str:  # snapshot of a repo's *.json: none here
        empty = tmp_path / "snapshots" / repo_id
        empty.mkdir(parents=True, exist_ok=True)
        return str(empty)

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", no_json_file)
    monkeypatch.setattr(huggingface_hub, "snapshot_download", json_files_only)
    monkeypatch.setattr(huggingface_hub, "HfApi", Api)
    yield repos
    assert attempts == [], f"tried to reach the network: {attempts}"


def write_table(path: Path, rows: dict[str, list], features: Features) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    datasets.Dataset.from_dict(rows, features=features).to_parquet(str(path))


def flickr_doc() -> dict[str, Any]:
    """The shape of the official dataset_flickr30k.json: 29,000 / 1,014 / 1,000 images, 5
    captions each (155,070), Flickr ids as file names."""
    images, sentid = [], 0
    for i, split in enumerate(["train"] * 29_000 + ["val"] * 1_014 + ["test"] * 1_000):
        sents = [{"sentid": sentid + j, "raw": f"Image {i} caption {j}."} for j in range(5)]
        images.append({"split": split, "imgid": i, "filename": f"{1_000_000 + 7 * i}.jpg",
                       "sentids": [s["sentid"] for s in sents], "sentences": sents})
        sentid += 5
    return {"images": images, "dataset": "flickr30k"}


def nlphuji_rows(doc: dict[str, Any]) -> tuple[dict[str, list], Features]:
    """nlphuji/flickr30k's features (its flickr30k.py): image, caption list[str], sentids
    list[str], split, img_id, filename; every image in one split `test`, Karpathy's in `split`."""
    images = doc["images"]
    rows = {
        "image": [NOT_AN_IMAGE] * len(images),
        "caption": [[s["raw"] for s in im["sentences"]] for im in images],
        "sentids": [[str(s) for s in im["sentids"]] for im in images],
        "split": [im["split"] for im in images],
        "img_id": [str(im["imgid"]) for im in images],
        "filename": [im["filename"] for im in images],
    }
    features = Features({"image": Image(), "caption": List(Value("string")), "sentids": List(Value("string")),
                         "split": Value("string"), "img_id": Value("string"), "filename": Value("string")})
    return rows, features


@pytest.fixture(scope="module")
def flickr(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Full-size Flickr30k tables: nlphuji's script repo and its parquet conversion, the official
    file, and lmms-lab's one-split table."""
    root = tmp_path_factory.mktemp("flickr")
    doc = flickr_doc()
    (root / "official").mkdir()
    (root / "official" / "dataset_flickr30k.json").write_text(json.dumps(doc))
    script = root / "nlphuji" / "flickr30k"  # the repo: a loading script, a csv, an image zip
    script.mkdir(parents=True)
    (script / "flickr30k.py").write_text("import datasets  # the loading script datasets 4 refuses\n")
    (script / "flickr_annotations_30k.csv").write_text("raw,sentids,split,filename,img_id\n")
    rows, features = nlphuji_rows(doc)
    write_table(root / "nlphuji-parquet" / "TEST" / "test" / "0000.parquet", rows, features)
    # lmms-lab/flickr30k: the same columns without `split`, all images in one split `test`
    lmms = {k: v for k, v in rows.items() if k != "split"}
    write_table(root / "lmms" / "data" / "test-00000-of-00001.parquet", lmms,
                Features({k: v for k, v in features.items() if k != "split"}))
    return {"root": root, "official": root / "official", "script": script, "parquet": root / "nlphuji-parquet",
            "lmms": root / "lmms"}


def prepare(benchmark_id: str, source: str, data_dir: Path, force: bool = False) -> dict[str, Any]:
    b = registry().benchmark(benchmark_id)
    [path] = registry().task_of(b).prepare(b, source, data_dir, force=force)
    return json.loads(path.read_text())


def test_nlphuji_flickr30k_reads_the_parquet_conversion(hub: dict, flickr: dict[str, Path], tmp_path: Path) -> None:
    """The hub repo is a loading script: prepare reads the hub's parquet conversion of it, text
    columns only, and reaches exactly the ground truth of the official file (no deviation)."""
    hub[("nlphuji/flickr30k", None)] = flickr["script"]
    hub[("nlphuji/flickr30k", PARQUET_BRANCH)] = flickr["parquet"]
    got = prepare("flickr30k-1k", "nlphuji/flickr30k", tmp_path / "hub")
    official = prepare("flickr30k-1k", str(flickr["official"]), tmp_path / "official")
    assert "source_check" not in got and got == official
    assert len(got["images"]) == 1_000 and len(got["captions"]) == 5_000 and all(got["images"])
    assert got["images"][0] == str(1_000_000 + 7 * 30_014)  # the first test image's Flickr id


def test_script_only_folder_and_lmms_flickr30k_are_refused(hub: dict, flickr: dict[str, Path], tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "data"
    # a local copy of the script repo: datasets 4 does not run it, and a folder has no conversion
    assert main(["data", "prepare", "flickr30k-1k", "--source", str(flickr["script"]), "--data-dir", str(data)]) == 2
    err = capsys.readouterr().err
    assert "loading-script dataset" in err and "nlphuji/flickr30k or the official dataset_flickr30k.json" in err
    # lmms-lab/flickr30k: all 31,014 images here in one split `test`, no split column; refused
    # even with --force (counted: this copy has no card recording the split sizes)
    hub[("lmms-lab/flickr30k", None)] = flickr["lmms"]
    for force in ([], ["--force"]):
        assert main(["data", "prepare", "flickr30k-1k", "--source", "lmms-lab/flickr30k", "--data-dir", str(data),
                     *force]) == 2
        err = capsys.readouterr().err
        assert ("has no Karpathy split: no 'split' column, and its split 'test' holds 31,014 images where "
                "Karpathy's test split has 1,000; use nlphuji/flickr30k") in err
    assert not data.exists()  # nothing written


def test_a_card_with_split_sizes_refuses_before_reading_rows(hub: dict, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """lmms-lab/flickr30k's card records `test: 31,783` rows: refused from the card, no row read."""
    folder = tmp_path / "lmms-card"
    rows = {"image": [NOT_AN_IMAGE] * 3, "caption": [["a", "b"]] * 3, "sentids": [["1", "2"], ["3", "4"], ["5", "6"]],
            "img_id": ["0", "1", "2"], "filename": ["1.jpg", "2.jpg", "3.jpg"]}
    features = Features({"image": Image(), "caption": List(Value("string")), "sentids": List(Value("string")),
                         "img_id": Value("string"), "filename": Value("string")})
    write_table(folder / "data" / "test-00000-of-00001.parquet", rows, features)
    (folder / "README.md").write_text(
        "---\ndataset_info:\n  features:\n  - name: image\n    dtype: image\n  - name: caption\n    sequence: string\n"
        "  - name: sentids\n    sequence: string\n  - name: img_id\n    dtype: string\n  - name: filename\n"
        "    dtype: string\n  splits:\n  - name: test\n    num_bytes: 4190829605.876\n    num_examples: 31783\n"
        "configs:\n- config_name: default\n  data_files:\n  - split: test\n    path: data/test-*\n---\n")
    hub[("lmms-lab/flickr30k", None)] = folder
    from vlbench.tasks.retrieval import hub_tables

    real_stream = hub_tables._stream
    streamed: list[Any] = []
    monkeypatch.setattr(hub_tables, "_stream", lambda *a: streamed.append(a[2]) or real_stream(*a))
    with pytest.raises(UsageError, match="split 'test' holds 31,783 images where Karpathy's test split has 1,000"):
        prepare("flickr30k-1k", "lmms-lab/flickr30k", tmp_path / "data", force=True)
    assert streamed == [None]  # the schema only: the rows were never read


def coco_yerevann(doc: dict[str, Any], folder: Path) -> None:
    """yerevann/coco-karpathy's layout and schema: splits train / validation / test (restval rows
    in train, told apart by `split`), sentences as raw strings next to integer sentids, no image
    bytes (images come from `url`)."""
    features = Features({"filepath": Value("string"), "sentids": List(Value("int32")), "filename": Value("string"),
                         "imgid": Value("int32"), "split": Value("string"), "sentences": List(Value("string")),
                         "cocoid": Value("int32"), "url": Value("string")})
    for hf_split, karpathy in (("train", {"train", "restval"}), ("validation", {"val"}), ("test", {"test"})):
        images = [im for im in doc["images"] if im["split"] in karpathy]
        rows = {"filepath": [im["filepath"] for im in images], "sentids": [im["sentids"] for im in images],
                "filename": [im["filename"] for im in images], "imgid": [im["imgid"] for im in images],
                "split": [im["split"] for im in images],
                "sentences": [[s["raw"] for s in im["sentences"]] for im in images],
                "cocoid": [im["cocoid"] for im in images],
                "url": [f"http://images.cocodataset.org/{im['filepath']}/{im['filename']}" for im in images]}
        write_table(folder / "data" / f"{hf_split}-00000-of-00001.parquet", rows, features)


def test_yerevann_coco_karpathy_for_retrieval_and_captions(hub: dict, tmp_path: Path) -> None:
    doc = karpathy_doc(40, n_other=6, extra_caption_every=3)
    coco_yerevann(doc, tmp_path / "yerevann")
    (tmp_path / "official").mkdir()
    (tmp_path / "official" / "dataset_coco.json").write_text(json.dumps(doc))
    hub[("yerevann/coco-karpathy", None)] = tmp_path / "yerevann"
    for benchmark in ("coco-5k", "coco-1k"):  # a small copy: a deviation, recorded under --force
        with pytest.raises(UsageError, match="images in split 'test': expected 5,000, found 40"):
            prepare(benchmark, "yerevann/coco-karpathy", tmp_path / "refused")
        with deviation_expected(benchmark):
            got = prepare(benchmark, "yerevann/coco-karpathy", tmp_path / "hub", force=True)
        with deviation_expected(benchmark):
            official = prepare(benchmark, str(tmp_path / "official"), tmp_path / "official-data", force=True)
        assert {k: v for k, v in got.items() if k != "source_check"} == \
            {k: v for k, v in official.items() if k != "source_check"}
        assert got["images"] == [str(100_000 + i) for i in range(40)]
    # the caption benchmark: the same table, as a hub id and as a local folder
    b = registry().benchmark("coco-karpathy-test")
    task = registry().task_of(b)
    for source in ("yerevann/coco-karpathy", str(tmp_path / "yerevann")):
        with deviation_expected("coco-karpathy-test"):
            [path] = task.prepare(b, source, tmp_path / "caps", force=True)
        refs: References = task.load_ground_truth(b, _files(path))
        expected = [im for im in doc["images"] if im["split"] == "test"]
        assert refs.ids == [im["cocoid"] for im in expected]
        assert refs.captions == [[s["raw"] for s in im["sentences"]] for im in expected]


def _files(path: Path) -> Any:
    from vlbench.ground_truth import GroundTruthFiles

    return GroundTruthFiles({"references": path}, {"references": ""})


def test_lmms_coco_caption_is_refused_by_its_columns(hub: dict, tmp_path: Path) -> None:
    """lmms-lab/COCO-Caption: COCO 2014 val and test (`val`, `test`), captions in `answer`, ids in
    `id` and `file_name`, no Karpathy split or sentence ids."""
    folder = tmp_path / "lmms-coco"
    features = Features({"question_id": Value("string"), "image": Image(), "question": Value("string"),
                         "answer": List(Value("string")), "id": Value("int64"), "license": Value("int8"),
                         "file_name": Value("string"), "coco_url": Value("string"), "height": Value("int32"),
                         "width": Value("int32"), "date_captured": Value("string")})
    for split in ("val", "test"):
        rows = {"question_id": ["COCO_val2014_000000391895.jpg"], "image": [NOT_AN_IMAGE],
                "question": ["Provide a one-sentence caption for the provided image."],
                "answer": [["A man with a red helmet on a small moped on a dirt road."] * 5], "id": [391895],
                "license": [3], "file_name": ["COCO_val2014_000000391895.jpg"], "coco_url": ["http://x/y.jpg"],
                "height": [360], "width": [640], "date_captured": ["2013-11-14 11:18:45"]}
        write_table(folder / "data" / f"{split}-00000-of-00001.parquet", rows, features)
    hub[("lmms-lab/COCO-Caption", None)] = folder
    for benchmark in ("coco-5k", "coco-karpathy-test"):
        with pytest.raises(UsageError) as refused:
            prepare(benchmark, "lmms-lab/COCO-Caption", tmp_path / "data", force=True)
        message = str(refused.value)
        assert "has no a caption column" in message and "Karpathy sentence ids ('sentids')" in message
        assert "use yerevann/coco-karpathy or the official dataset_coco.json" in message
    assert not (tmp_path / "data").exists()


def test_webdataset_is_refused_without_reading_shards(hub: dict, tmp_path: Path) -> None:
    """clip-benchmark/wds_flickr30k: tar shards (`test/0.tar`) of jpg and txt per key."""
    folder = tmp_path / "wds_flickr30k"
    (folder / "test").mkdir(parents=True)
    with tarfile.open(folder / "test" / "0.tar", "w") as tar:
        for key in ("s0000000", "s0000001"):
            for ext, data in (("jpg", b"not an image"), ("txt", b"A dog runs.")):
                info = tarfile.TarInfo(f"{key}.{ext}")
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    hub[("clip-benchmark/wds_flickr30k", None)] = folder
    for source in ("clip-benchmark/wds_flickr30k", str(folder)):
        with pytest.raises(UsageError, match="is a webdataset .* use nlphuji/flickr30k or the official"):
            prepare("flickr30k-1k", source, tmp_path / "data", force=True)


def test_file_name_column_gives_ids_and_empty_ids_are_refused(hub: dict, tmp_path: Path) -> None:
    """A Flickr30k table with `file_name` (not `filename`) once prepared to 1,000 empty image
    ids: now the file name's stem is the id, and empty or repeated ids are refused."""
    doc = karpathy_doc(6, n_other=2, dataset="flickr30k")
    features = Features({"file_name": Value("string"), "caption": List(Value("string")),
                         "sentids": List(Value("int64")), "split": Value("string")})

    def table(names: list[str], folder: Path) -> Path:
        rows = {"file_name": names, "caption": [[s["raw"] for s in im["sentences"]] for im in doc["images"]],
                "sentids": [im["sentids"] for im in doc["images"]], "split": [im["split"] for im in doc["images"]]}
        write_table(folder / "data" / "train-00000-of-00001.parquet", rows, features)
        return folder

    good = table([im["filename"] for im in doc["images"]], tmp_path / "good")
    with deviation_expected():  # a toy source, forced: the warning is expected
        got = prepare("flickr30k-1k", str(good), tmp_path / "a", force=True)
    assert got["images"] == [str(1000 + i) for i in range(6)]
    empty = table([""] * len(doc["images"]), tmp_path / "empty")
    with pytest.raises(UsageError, match="12 images have no id"):
        prepare("flickr30k-1k", str(empty), tmp_path / "b", force=True)
    repeated = table(["1.jpg"] * len(doc["images"]), tmp_path / "repeated")
    with pytest.raises(UsageError, match="image ids appear more than once"):
        prepare("flickr30k-1k", str(repeated), tmp_path / "c", force=True)
    assert not (tmp_path / "b").exists() and not (tmp_path / "c").exists()


def test_ground_truth_refuses_empty_or_repeated_ids_from_any_source(tmp_path: Path) -> None:
    """The same guard for a Karpathy json file: no cocoid, an empty file name."""
    doc = karpathy_doc(3, dataset="flickr30k")
    for im in doc["images"]:
        im["filename"] = ""
    (tmp_path / "dataset_flickr30k.json").write_text(json.dumps(doc))
    # a toy source, forced: the warning is expected (given before the ids are refused)
    with pytest.raises(UsageError, match="image ids are not usable: 3 empty among 3"), deviation_expected():
        prepare("flickr30k-1k", str(tmp_path), tmp_path / "data", force=True)
    doc["images"][0]["filename"] = doc["images"][1]["filename"] = "7.jpg"
    doc["images"][2]["filename"] = "8.jpg"
    (tmp_path / "dataset_flickr30k.json").write_text(json.dumps(doc))
    with pytest.raises(UsageError, match="image ids are not usable: 1 repeated among 3"), deviation_expected():
        prepare("flickr30k-1k", str(tmp_path), tmp_path / "data", force=True)
    assert not (tmp_path / "data").exists()


def test_known_hub_datasets_are_listed_for_users(capsys: pytest.CaptureFixture[str]) -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    with pytest.raises(SystemExit):
        main(["data", "prepare", "--help"])
    help_text = capsys.readouterr().out
    for hub_id, verdict in KNOWN_HUB_DATASETS.items():
        assert f"`{hub_id}`" in readme
        if verdict.startswith("works"):
            assert hub_id in help_text
