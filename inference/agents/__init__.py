"""The two arms' agents: HarnessAgent (treatment) and ReActAgent (control)."""
