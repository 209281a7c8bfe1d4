using Xunit;
using Xunit.Abstractions;
using Xunit.Sdk;

namespace MuxWatch.Testing;

/// <summary>
/// Marks a test class that takes minutes (a real Prometheus paging through Alertmanager, a native publish, a cluster's
/// failover, a series of induced stalls): <see cref="LongestFirst"/> starts it before the short ones, and it carries the
/// trait <c>Speed=Minutes</c>, which the fast loop (<c>./test.sh --fast</c>) leaves out.
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

/// <summary>
/// Starts the test collections marked <see cref="TakesMinutesAttribute"/> first, then the rest in name order: with two
/// cores, a collection of minutes started last runs on alone while the other thread idles (the service's tests took
/// 7.9 min of wall time for 12 min of work, the alert test started near the end). Longest first is the classic
/// schedule for jobs on a fixed number of workers; xunit's conservative parallel algorithm starts collections in the
/// orderer's order.
/// </summary>
public sealed class LongestFirst : ITestCollectionOrderer
{
    /// <summary>The orderer's type name, for <c>[assembly: TestCollectionOrderer(LongestFirst.TypeName, LongestFirst.AssemblyName)]</c>.</summary>
    public const string TypeName = "MuxWatch.Testing.LongestFirst";

    /// <summary>The assembly that holds it.</summary>
    public const string AssemblyName = "MuxWatch.Testing";

    /// <inheritdoc />
    public IEnumerable<ITestCollection> OrderTestCollections(IEnumerable<ITestCollection> testCollections) =>
        testCollections.OrderByDescending(TakesMinutes).ThenBy(collection => collection.DisplayName, StringComparer.Ordinal);

    private static bool TakesMinutes(ITestCollection collection)
    {
        // A class's own collection is named after it ("Test collection for <class>"); a shared one has its definition.
        if (collection.CollectionDefinition is { } definition && Marked(definition))
        {
            return true;
        }

        return collection.TestAssembly.Assembly.GetTypes(includePrivateTypes: false)
            .Any(type => Marked(type) && collection.DisplayName.EndsWith(type.Name, StringComparison.Ordinal));
    }

    private static bool Marked(ITypeInfo type) => type.GetCustomAttributes(typeof(TakesMinutesAttribute).AssemblyQualifiedName).Any();
}
