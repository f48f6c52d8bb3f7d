"""``python -m apis.fake.apiserver``: the sandbox API server's old command, kept as an entry point only.

The server moved to the top-level ``sandbox`` package (``python -m sandbox``, same flags). Other programs and
scripts start it with this command (a DESIGN.md contract), so this module runs ``sandbox``'s ``__main__`` with the
same arguments. It does so by name (``runpy``) rather than by ``import sandbox``: ``apis`` is the library layer and
never imports the sandbox (test/unit/test_library_rules.py). Importing this module does nothing.
"""

import runpy

if __name__ == "__main__":
    runpy.run_module("sandbox", run_name="__main__", alter_sys=True)
