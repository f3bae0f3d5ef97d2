package rules

import "syscall"

const sysFstatat = syscall.SYS_NEWFSTATAT
