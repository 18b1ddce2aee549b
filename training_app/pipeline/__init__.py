"""Training stage runners (HSA-SFT, general OPD, HSA-RL) on TRL. Arrives with the
training milestone."""
