// Package unhandled lets a listener wrapper of the kit say that the listener it wraps
// has no method for a message, so that feed.Deliver counts the message as unhandled
// (SessionStats.Unhandled), as it does for a listener without the method, and reports
// no error.
package unhandled

import "errors"

// Err is what the wrapper's method returns: a concurrent.SerialDispatcher's OnCashout
// for a listener that is no feed.CashoutListener, which must still be called so that
// its task pairs with the message.
var Err = errors.New("the listener has no method for this message")
