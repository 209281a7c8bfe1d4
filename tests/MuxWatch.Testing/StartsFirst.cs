using Xunit;
using Xunit.Abstractions;
using Xunit.Sdk;

namespace MuxWatch.Testing;

/// <summary>
/// Marks a test class that spends minutes mostly waiting on other processes' clocks (Prometheus' rule evaluations,
/// Alertmanager's groups): <see cref="StartsFirstOrderer"/> starts it before the rest, so that its waiting overlaps
/// them instead of ending the run. Only for such waiting classes: a class that keeps the cores busy started first
/// beside another would load the machine for both.
/// </summary>
[AttributeUsage(AttributeTargets.Class)]
public sealed class StartsFirstAttribute : Attribute;

/// <summary>
/// The test collections in xunit's own order, but those of classes marked <see cref="StartsFirstAttribute"/> first.
/// Registered per assembly with <c>[assembly: TestCollectionOrderer(...)]</c>.
/// </summary>
public sealed class StartsFirstOrderer : ITestCollectionOrderer
{
    // xunit names a class's own collection this way; a class in a shared collection is not started first.
    private const string ClassCollection = "Test collection for ";

    private readonly DefaultTestCollectionOrderer _default = new();

    /// <inheritdoc />
    public IEnumerable<ITestCollection> OrderTestCollections(IEnumerable<ITestCollection> testCollections)
    {
        var ordered = _default.OrderTestCollections(testCollections).ToList();
        return [.. ordered.Where(StartsFirst), .. ordered.Where(collection => !StartsFirst(collection))];
    }

    private static bool StartsFirst(ITestCollection collection) =>
        collection.CollectionDefinition is null
        && collection.DisplayName.StartsWith(ClassCollection, StringComparison.Ordinal)
        && collection.TestAssembly.Assembly.GetType(collection.DisplayName[ClassCollection.Length..]) is { } type
        && type.GetCustomAttributes(typeof(StartsFirstAttribute).AssemblyQualifiedName).Any();
}
