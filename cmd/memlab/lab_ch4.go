package main

import _ "memlab.dev/memlab/experiments/ch4" // registers chapter 4's experiments with memlab lab
