"""Pieces of `make class-test` (tools/class_test.py): accounts, environment, hub, notebooks."""
