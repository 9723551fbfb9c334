"""The environment protocol, defined with the method-facing contract (`evoarena.api.environment`) so benchmarks and
the protocol can name it; re-exported here for environment authors."""

from evoarena.api.environment import Env, Step

__all__ = ["Env", "Step"]
