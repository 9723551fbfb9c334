"""Scripted players of CLR-Bench: the exception-lister student and its update roles."""
