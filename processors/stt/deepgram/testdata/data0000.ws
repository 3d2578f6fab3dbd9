# The audio cannot be decoded (wrong encoding parameter).
< audio 3200
close 1008 DATA-0000
