package suppress

// HasSuppressMarker is hasSuppressMarker, for tests.
func HasSuppressMarker(src []byte) bool { return hasSuppressMarker(src) }
