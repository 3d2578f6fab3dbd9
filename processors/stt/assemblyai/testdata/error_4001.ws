# The older code for a refused key.
close 4001 Not Authorized
