"""Whether the ``site`` extra is installed: ``fairsite`` says so in one line, not a traceback.

``pyproject.toml`` splits the dependencies: installing ``faircode`` as a library brings only what
``import faircode`` needs; the site build needs the ``site`` extra on top (MkDocs, Material,
Jinja, matplotlib, statsmodels for the explainers), which the lock ``requirements/site.txt``
holds. Standard library only, so the check runs before anything it checks is imported.
"""

from __future__ import annotations

import importlib.util

#: The ``site`` extra of ``pyproject.toml``: each distribution and the module it is imported as
#: (a test holds the keys equal to the extra).
SITE_EXTRA: dict[str, str] = {
    "jinja2": "jinja2",
    "markupsafe": "markupsafe",
    "matplotlib": "matplotlib",
    "mkdocs": "mkdocs",
    "mkdocs-material": "material",
    "mkdocs-glightbox": "mkdocs_glightbox",
    "selectolax": "selectolax",
    "statsmodels": "statsmodels",
    "pyarrow": "pyarrow",
}

INSTALL_HINT = (".venv/bin/pip install --require-hashes -r requirements/site.txt (the locked versions), "
                "or pip install -e '.[site]' (any compatible ones)")


def missing_site_packages() -> list[str]:
    """The distributions of the ``site`` extra that cannot be imported, in `SITE_EXTRA` order.

    Returns
    -------
    list of str
        Distribution names (e.g. ``["mkdocs", "matplotlib"]``); empty when the extra is installed.
    """
    return [dist for dist, module in SITE_EXTRA.items() if importlib.util.find_spec(module) is None]
