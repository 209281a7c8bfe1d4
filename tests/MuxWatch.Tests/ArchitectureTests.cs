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
        ["MuxWatch.Tracking"],
        ["MuxWatch.Pipeline"],
        ["MuxWatch.Sinks", "MuxWatch.Sources"],
        ["MuxWatch.Json"],
        ["MuxWatch.Fleet"],
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

    /// <summary>The same order for <c>using</c> lines, which the IL check above cannot see (one kept for an XML-doc link).</summary>
    private static readonly string[][] SourceLayers =
    [
        ["MuxWatch.Configuration"],
        ["MuxWatch.Model"],
        ["MuxWatch.Reading"],
        ["MuxWatch.Diagnosis.Rules"],
        ["MuxWatch.Diagnosis"],
        ["MuxWatch.Export"],
        ["MuxWatch.State"],
        ["MuxWatch.Tracking"],
        ["MuxWatch.Pipeline"],
        ["MuxWatch.Sinks", "MuxWatch.Sources"],
        ["MuxWatch.Json"],
        ["MuxWatch.Fleet"],
        ["MuxWatch.Hosting"],
        ["Microsoft.Extensions.DependencyInjection"], // the entry points (AddMuxWatch), found where IServiceCollection's are
    ];

    [Fact]
    public void No_using_line_of_the_core_points_up_a_layer_or_across_to_a_sibling()
    {
        var core = Path.Combine(MuxWatch.Testing.BuiltProgram.RepositoryRoot, "src", "MuxWatch");
        var wrong = new List<string>();
        foreach (var file in Directory.EnumerateFiles(core, "*.cs", SearchOption.AllDirectories).Where(f => !f.Contains("/obj/", StringComparison.Ordinal) && !f.Contains("/bin/", StringComparison.Ordinal)))
        {
            var lines = File.ReadAllLines(file);
            if (lines.Select(l => l.Trim()).FirstOrDefault(l => l.StartsWith("namespace ", StringComparison.Ordinal)) is not { } declaration)
            {
                continue;
            }

            var own = declaration["namespace ".Length..].TrimEnd(';', ' ');
            var level = SourceLevel(own);
            foreach (var line in lines.Select(l => l.Trim()).Where(l => l.StartsWith("using MuxWatch", StringComparison.Ordinal) || l.StartsWith("using static MuxWatch", StringComparison.Ordinal)))
            {
                var used = line.Replace("using static ", "", StringComparison.Ordinal).Replace("using ", "", StringComparison.Ordinal).TrimEnd(';');
                var usedLevel = SourceLevel(used);
                if (usedLevel > level || (usedLevel == level && !used.StartsWith(own, StringComparison.Ordinal)))
                {
                    wrong.Add($"{Path.GetRelativePath(core, file)} ({own}): {line}");
                }
            }
        }

        Assert.Empty(wrong);
    }

    [Fact]
    public void The_rules_use_nothing_of_the_diagnoser_above_them()
    {
        // A child namespace sees its parent's types without a using line: checked on the compiled types.
        var above = Core.GetTypes().Where(t => t.Namespace == "MuxWatch.Diagnosis" && !t.IsNested).Select(t => t.FullName!).ToArray();

        var result = Types.InAssembly(Core).That().ResideInNamespace("MuxWatch.Diagnosis.Rules").ShouldNot().HaveDependencyOnAny(above).GetResult();

        Assert.True(result.IsSuccessful, string.Join(", ", result.FailingTypeNames ?? []));
    }

    /// <summary>The level of <paramref name="name"/> (a namespace, or a static class in one): its longest matching layer.</summary>
    private static int SourceLevel(string name)
    {
        var best = (Level: -1, Length: 0);
        for (var i = 0; i < SourceLayers.Length; i++)
        {
            foreach (var layer in SourceLayers[i].Where(l => (name == l || name.StartsWith(l + ".", StringComparison.Ordinal)) && l.Length > best.Length))
            {
                best = (i, layer.Length);
            }
        }

        return best.Level;
    }

    [Fact]
    public void No_source_file_is_over_400_lines()
    {
        // A file that long holds more than one concern: split it by concern (the metrics: a file per family group).
        var src = Path.Combine(MuxWatch.Testing.BuiltProgram.RepositoryRoot, "src");
        var over = Directory.EnumerateFiles(src, "*.*", SearchOption.AllDirectories)
            .Where(f => (f.EndsWith(".cs", StringComparison.Ordinal) || f.EndsWith(".js", StringComparison.Ordinal)) && !f.Contains("/obj/", StringComparison.Ordinal) && !f.Contains("/bin/", StringComparison.Ordinal))
            .Select(f => (File: Path.GetRelativePath(src, f), Lines: File.ReadLines(f).Count()))
            .Where(f => f.Lines > 400)
            .Select(f => $"{f.File}: {f.Lines}")
            .ToList();

        Assert.Empty(over);
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
