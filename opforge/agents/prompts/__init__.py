"""The drafting prompts: Jinja2 templates (system.j2, draft.j2) rendered by render.py."""
