"""Scripted players of the sheets benchmark: the student and its SkillProx roles."""
