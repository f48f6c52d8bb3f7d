"""EchoJob: a kind that is not Sedna's, added to sedna-gm in one file (``kind.py``) plus a registry line, its CRD
(``crd.yaml``, generated from the kind's typed view) and a sample (``sample.yaml``). See docs/globalmanager.md,
"Writing a kind"."""
