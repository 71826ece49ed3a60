"""Renderers: views of one decision or report object (text, JSON, Markdown). They format; they decide nothing."""
