#!/bin/sh
### BEGIN INIT INFO
# Provides:          checkroot
# Required-Start:    mountdevsubfs hostname
# Required-Stop:
# Default-Start:     S
# Default-Stop:
### END INIT INFO
exit 0
