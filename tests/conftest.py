import os
import sys

# tests/reference.py is imported as `reference` by the tests
sys.path.insert(0, os.path.dirname(__file__))
