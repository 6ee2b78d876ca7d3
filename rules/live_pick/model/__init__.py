"""Adapters to an OpenAI-compatible chat-completions endpoint: a tagger and a summary writer.

The only network code under `rules/`: the engine never calls it by itself, it is handed a
tagger or a writer by name, and every answer is checked before the rules use it (a tag outside
the vocabulary, a malformed answer, a timeout or an error is discarded; a summary that fails the
seed's checks falls back to the template sentence).
"""
