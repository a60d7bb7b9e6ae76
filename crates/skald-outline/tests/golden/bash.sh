#!/bin/sh
foo() { echo hi; }
function bar { echo; }
