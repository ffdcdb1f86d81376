"""The Fair Code explainer site build.

``site_src.build.build`` is the pipeline, read top to bottom as its stages:
collect -> extract -> execute -> check -> render -> site. Each stage has a folder:

- ``sources/``: the explainer sources: ``collect`` (stage 1: front matter, prose, code block),
  ``extract`` (stage 2: ``explainers/code/<slug>.py``), ``scaffold`` (``fairsite new``).
- ``execution/``: stage 3: ``execute`` (the pool of clean processes), ``_runner`` (what runs in
  each one: its ``main`` reads as the run's steps, each job in a module of its own: ``_inputs``,
  ``_limits``, ``_capture``, ``_cells``, ``_forkserver``), ``cache`` (when a run may be reused,
  and its typed entry).
- ``checking/``: stage 4: ``check`` (the ``checks:``), ``lint`` (numbers typed by hand in the
  prose), ``snapshot`` (the accepted numbers in ``explainers/<slug>.numbers.json``).
- ``rendering/``: stage 5: ``render`` (the stage: every page under ``docs/``), ``environment``
  (the Jinja environment), ``pages`` (explainer pages and their cache), ``results_page`` (the
  results explorer and its cache), ``figures`` (its matplotlib figures), ``results`` (lookups in
  the results file), ``notebook``, ``filters``, ``glossary``, ``terminal``.
- ``publishing/``: stage 6: ``mkdocs_site`` (MkDocs makes ``site/``), ``mkdocs_hooks``,
  ``linkcheck``, ``provenance`` (where a build came from), ``serve`` (the server of
  ``fairsite serve``, with a failed rebuild's banner).

Beside them: ``cli`` (the ``fairsite`` command), ``publish`` (``fairsite publish``: it runs the
whole pipeline, so it is a command, not a stage), ``errors`` (the exception tree) and
``filestate`` (file digests remembered by metadata; read before anything heavy is imported).
``ARCHITECTURE.md`` at the repository root tells the whole story.
"""
