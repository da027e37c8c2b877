package discovery

// PutAndEncode adds e to l in memory, as AddToLock does, and returns the
// bytes AddToLock would write, so that fuzz tests need no file system.
func PutAndEncode(l *Lock, e LockEntry) ([]byte, error) {
	if err := l.put(e); err != nil {
		return nil, err
	}
	return l.encode()
}
