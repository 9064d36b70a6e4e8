// a room report must not reach
