"""Reports: diagnostics rendered as text or JSON (later: plans, SARIF, annotations)."""
