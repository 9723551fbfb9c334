"""The method's side of the boundary: `client.StepContext` (the `PracticeContext` a method holds) sends each request
over `channel` to the cell; `isolated`/`method_child` run the method in its own process, over `wire` frames."""
