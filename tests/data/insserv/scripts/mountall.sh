#!/bin/sh
### BEGIN INIT INFO
# Provides:          mountall
# Required-Start:    checkfs
# Required-Stop:
# Default-Start:     S
# Default-Stop:
### END INIT INFO
exit 0
