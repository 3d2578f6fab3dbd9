# The server takes the session.update and never says anything.
< session.update
