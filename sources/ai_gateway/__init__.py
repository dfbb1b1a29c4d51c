"""AI gateway usage: the requests an LLM gateway (LiteLLM) logged, with their tokens and the team that sent them."""
