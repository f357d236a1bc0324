"""The language server: `catalyst lsp` (LSP over stdio), from the checker's own model."""
