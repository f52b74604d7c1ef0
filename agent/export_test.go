package agent

// NewBoard is newBoard, for the tests outside the package.
var NewBoard = newBoard
