"""The Fair Code explainer site build.

``site_src.build.build`` is the pipeline; each stage lives in its own module:
collect -> extract -> execute -> check -> render -> site.
"""
