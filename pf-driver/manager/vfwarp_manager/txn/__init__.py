"""Changing a host safely: plan and drift, batched runs of actions, the
transaction (snapshot, journal, undo, verify), the lock, the state dir, the
audit log, apply --confirm-within. Imports layers/, policy/ and the top."""
