# An account out of funds (the older code; the current one is 1008 with the reason).
close 4002 Insufficient Funds
