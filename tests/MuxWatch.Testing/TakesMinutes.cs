using Xunit.Abstractions;
using Xunit.Sdk;

namespace MuxWatch.Testing;

/// <summary>
/// Marks a test class that takes minutes (a real Prometheus paging through Alertmanager, a native publish, a cluster's
/// failover, a series of induced stalls): it carries the trait <c>Speed=Minutes</c>, which the fast loop
/// (<c>./test.sh --fast</c>) leaves out. (Starting all of these first was tried: it ran the heavy live tests side by
/// side on two cores, and two of them misread their induced causes under the load; only the classes marked
/// <see cref="StartsFirstAttribute"/> start first, the order is otherwise xunit's.)
/// </summary>
[AttributeUsage(AttributeTargets.Class)]
[TraitDiscoverer("MuxWatch.Testing.TakesMinutesTrait", "MuxWatch.Testing")]
public sealed class TakesMinutesAttribute : Attribute, ITraitAttribute;

/// <summary>The trait of <see cref="TakesMinutesAttribute"/>: <c>Speed=Minutes</c>.</summary>
public sealed class TakesMinutesTrait : ITraitDiscoverer
{
    /// <inheritdoc />
    public IEnumerable<KeyValuePair<string, string>> GetTraits(IAttributeInfo traitAttribute) => [new("Speed", "Minutes")];
}
