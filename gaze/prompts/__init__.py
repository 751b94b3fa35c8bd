"""Versioned prompts, one file per agent role."""

from gaze.prompts.loader import PROMPT_IDS, Prompt, load_prompt

__all__ = ["PROMPT_IDS", "Prompt", "load_prompt"]
