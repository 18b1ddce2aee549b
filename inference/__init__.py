"""Agent runtime (pure Python, no Django): OpenAI-compatible LLM clients, HarnessAgent,
ReActAgent, hooks engine, tool executors, worker launch profiles and latency replay.
Arrives with the agent-runtime milestone."""
