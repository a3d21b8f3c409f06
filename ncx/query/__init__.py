"""query: the read side — cache -> ranking -> frames. Nothing here imports ncx.tree."""
