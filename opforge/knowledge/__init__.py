"""What a drafter reads before writing a kernel: curated notes per backend (backends/<name>/notes/),
the suite's known-good kernels as examples (backends/<name>/knowledge/<op>.py with ops/<op>.py), and
verified kernels from the registry that the caller passes in. `retrieve` ranks all three for a spec."""
from opforge.knowledge.corpus import KnowledgeError, load_examples, load_notes, spec_tags
from opforge.knowledge.retrieve import KnowledgeItem, retrieve

__all__ = ["KnowledgeError", "KnowledgeItem", "load_examples", "load_notes", "retrieve", "spec_tags"]
