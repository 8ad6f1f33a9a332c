"""Exports of a generated dataset into layouts that other people's code reads (SPARE3D's released folders)."""
