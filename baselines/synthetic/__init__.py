"""D': object-removed training pairs, the ODmAP paper's mitigation (Sec. 3.3).

For a train image, a removal is chosen by the decorrelated task's own tau rules
(`vlbench.tasks.decorrelated.removal`), the region is filled by the task's fill (diffusers
inpainting by default; blur, mean, zero; or, in the mini world, an exact re-render without the
removed shapes), and the caption is one of the image's captions with the noun phrases of the
removed classes deleted (default) or a prompt listing the classes that remain.

Modules: `sources.py` (the train images of a benchmark family with their objects and captions),
`captions.py` (editing a caption for a removal), `build.py` (planning D', filling it, and the
cache). The package exports nothing itself: import from the module that does the job.
"""
