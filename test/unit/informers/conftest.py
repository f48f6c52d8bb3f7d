import os
import sys

# the tests import their shared fakes from informer_test_helpers.py next to this file
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
