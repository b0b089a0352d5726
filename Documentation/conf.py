# SPDX-License-Identifier: GPL-2.0
# Sphinx configuration of sroce's documentation (make htmldocs).
project = "sroce"
copyright = "the sroce authors"
master_doc = "index"
exclude_patterns = []
html_theme = "alabaster"
html_show_sourcelink = False
