using MuxWatch.Hosting;
using NetArchTest.Rules;

namespace MuxWatch.Tests;

/// <summary>
/// The core's layers, read bottom to top (docs/architecture.md): each may use the ones below it, never
/// one above. A type that reaches up fails here, naming itself, before it can tie the layers into a loop.
/// </summary>
public sealed class ArchitectureTests
{
    /// <summary>Bottom first. Sinks and sources share a level: neither knows the other.</summary>
    private static readonly string[][] Layers =
    [
        ["MuxWatch.Configuration"],
        ["MuxWatch.Model"],
        ["MuxWatch.Reading"],
        ["MuxWatch.Diagnosis"],
        ["MuxWatch.Export"],
        ["MuxWatch.State"],
        ["MuxWatch.Pipeline"],
        ["MuxWatch.Sinks", "MuxWatch.Sources"],
        ["MuxWatch.Json"],
        ["MuxWatch.Hosting"],
    ];

    private static readonly System.Reflection.Assembly Core = typeof(MuxWatchBuilder).Assembly;

    public static TheoryData<string> Namespaces() => [.. Layers.SelectMany(level => level)];

    [Theory]
    [MemberData(nameof(Namespaces))]
    public void A_layer_uses_only_the_layers_below_it(string layer)
    {
        var level = Array.FindIndex(Layers, names => names.Contains(layer));
        var forbidden = Layers.Skip(level + 1).SelectMany(names => names)
            .Concat(Layers[level].Where(name => name != layer)) // a sibling on the same level
            .ToArray();

        var result = Types.InAssembly(Core).That().ResideInNamespace(layer).ShouldNot().HaveDependencyOnAny(forbidden).GetResult();

        Assert.True(result.IsSuccessful, $"{layer} reaches up to {string.Join(", ", forbidden)}: {string.Join(", ", result.FailingTypeNames ?? [])}");
    }

    [Fact]
    public void Every_core_type_lives_in_a_layer()
    {
        var layered = Layers.SelectMany(names => names).ToArray();
        var outside = Core.GetTypes()
            .Where(type => type.Namespace is { } ns && ns.StartsWith("MuxWatch", StringComparison.Ordinal) && !layered.Any(layer => ns == layer || ns.StartsWith(layer + ".", StringComparison.Ordinal)))
            .Select(type => type.FullName)
            .ToList();

        Assert.Empty(outside);
    }

    [Fact]
    public void The_core_knows_neither_the_client_nor_ASP_NET_Core()
    {
        var result = Types.InAssembly(Core).ShouldNot().HaveDependencyOnAny("StackExchange.Redis", "Microsoft.AspNetCore").GetResult();

        Assert.True(result.IsSuccessful, string.Join(", ", result.FailingTypeNames ?? []));
    }

    [Fact]
    public void The_model_carries_no_serialization_attributes()
    {
        var result = Types.InAssembly(Core).That().ResideInNamespace("MuxWatch.Model").ShouldNot().HaveDependencyOn("System.Text.Json.Serialization").GetResult();

        Assert.True(result.IsSuccessful, string.Join(", ", result.FailingTypeNames ?? []));
    }

    public static TheoryData<string> Packages() => ["MuxWatch", "MuxWatch.StackExchangeRedis", "MuxWatch.AspNetCore"];

    [Theory]
    [MemberData(nameof(Packages))]
    public void A_package_opens_its_internals_to_test_assemblies_only(string package)
    {
        // A sibling package uses the public API anyone can (docs/public-api.md); only tests and the
        // benchmarks (which measure internals such as the reader) see internals. Loaded from its build
        // output: this test project references no ASP.NET Core.
        var assembly = System.Reflection.Assembly.LoadFrom(MuxWatch.Testing.BuiltProgram.PathOf(package));
        var openedTo = assembly.GetCustomAttributes(typeof(System.Runtime.CompilerServices.InternalsVisibleToAttribute), inherit: false)
            .Cast<System.Runtime.CompilerServices.InternalsVisibleToAttribute>()
            .Select(attribute => attribute.AssemblyName)
            .ToList();

        Assert.All(openedTo, name => Assert.True(name.EndsWith(".Tests", StringComparison.Ordinal) || name == "MuxWatch.Benchmarks", $"{package} opens its internals to {name}"));
    }
}
