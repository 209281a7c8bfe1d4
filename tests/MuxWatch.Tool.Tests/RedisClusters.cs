using MuxWatch.Testing;

namespace MuxWatch.Tool.Tests;

/// <summary>
/// The tests that form a Redis Cluster run one after another (beside the others still): two clusters forming and
/// gossiping at once on one loopback, each node on ports the system hands out and takes back, are more than the
/// cluster tests ask for, and a cluster test once found a seventh primary it had not made (CI, 3.4.35). Started first:
/// one after another they take about two minutes, which at the end of the run would be the run's last two.
/// </summary>
[StartsFirst]
[CollectionDefinition(nameof(RedisClusters))]
public sealed class RedisClusters;
