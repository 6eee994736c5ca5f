#!/bin/sh
### BEGIN INIT INFO
# Provides:          umountnfs
# Required-Start:
# Required-Stop:     umountfs
# Default-Start:
# Default-Stop:      0 6
### END INIT INFO
exit 0
