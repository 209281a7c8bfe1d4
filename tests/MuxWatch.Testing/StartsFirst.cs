using Xunit;
using Xunit.Abstractions;
using Xunit.Sdk;

namespace MuxWatch.Testing;

/// <summary>
/// Marks a test class that takes minutes whoever runs beside it: the end-to-end classes, which mostly wait on other
/// processes' clocks (Prometheus' rule evaluations, Alertmanager's groups), and the native publish.
/// <see cref="StartsFirstOrderer"/> starts them before the rest, so that their minutes overlap the rest instead of
/// ending the run (the native publish, started last, ran alone for almost three minutes). On a collection's definition
/// class, the whole shared collection starts first (the cluster tests, one after another, took two minutes at the end).
/// </summary>
[AttributeUsage(AttributeTargets.Class)]
public sealed class StartsFirstAttribute : Attribute;

/// <summary>
/// The test collections in xunit's own order, but those of classes marked <see cref="StartsFirstAttribute"/> first.
/// Registered per assembly with <c>[assembly: TestCollectionOrderer(...)]</c>.
/// </summary>
public sealed class StartsFirstOrderer : ITestCollectionOrderer
{
    // xunit names a class's own collection this way; a class in a shared collection starts first when its definition is marked.
    private const string ClassCollection = "Test collection for ";

    private readonly DefaultTestCollectionOrderer _default = new();

    /// <inheritdoc />
    public IEnumerable<ITestCollection> OrderTestCollections(IEnumerable<ITestCollection> testCollections)
    {
        var ordered = _default.OrderTestCollections(testCollections).ToList();
        return [.. ordered.Where(StartsFirst), .. ordered.Where(collection => !StartsFirst(collection))];
    }

    private static bool StartsFirst(ITestCollection collection) =>
        collection.CollectionDefinition is { } definition
            ? definition.GetCustomAttributes(typeof(StartsFirstAttribute).AssemblyQualifiedName).Any()
            : collection.DisplayName.StartsWith(ClassCollection, StringComparison.Ordinal)
                && collection.TestAssembly.Assembly.GetType(collection.DisplayName[ClassCollection.Length..]) is { } type
                && type.GetCustomAttributes(typeof(StartsFirstAttribute).AssemblyQualifiedName).Any();
}
