using System.ComponentModel;
using System.Reflection;
using System.Text.RegularExpressions;
using MuxWatch.Hosting;
using MuxWatch.StackExchangeRedis;
using MuxWatch.Testing;

namespace MuxWatch.Tests;

/// <summary>
/// The public surface is the one docs/public-api.md states: every public type of the core and of
/// MuxWatch.StackExchangeRedis named in its tables, the probe-package contract hidden from IntelliSense and
/// an app's types not.
/// </summary>
public sealed partial class PublicSurfaceTests
{
    private static readonly Assembly[] Packages = [typeof(MuxWatchBuilder).Assembly, typeof(TargetOptions).Assembly];

    private static readonly string Reference = File.ReadAllText(Path.Combine(BuiltProgram.RepositoryRoot, "docs", "public-api.md"));

    private static HashSet<string> NamedIn(string section)
    {
        var start = Reference.IndexOf(section, StringComparison.Ordinal);
        Assert.True(start >= 0, $"docs/public-api.md has no \"{section}\"");
        var end = Reference.IndexOf("\n## ", start + section.Length, StringComparison.Ordinal);
        var text = end < 0 ? Reference[start..] : Reference[start..end];
        return [.. Backticked().Matches(text).Select(m => m.Groups["name"].Value)];
    }

    private static IEnumerable<Type> PublicTypes() => Packages.SelectMany(a => a.GetExportedTypes()).Where(t => !t.IsNested);

    private static bool Hidden(Type type) =>
        type.GetCustomAttribute<EditorBrowsableAttribute>()?.State == EditorBrowsableState.Never;

    [Fact]
    public void Every_public_type_is_named_in_the_reference()
    {
        var named = NamedIn("## What an app sees").Concat(NamedIn("## The probe-package contract")).ToHashSet();

        Assert.Empty(PublicTypes().Select(t => t.Name).Where(name => !named.Contains(name)).Order());
    }

    [Fact]
    public void The_probe_package_contract_is_hidden_from_IntelliSense_and_an_apps_types_are_not()
    {
        var contract = NamedIn("## The probe-package contract");
        var types = PublicTypes().ToList();

        Assert.Empty(types.Where(t => contract.Contains(t.Name) && !Hidden(t)).Select(t => t.FullName));
        Assert.Empty(types.Where(t => !contract.Contains(t.Name) && Hidden(t)).Select(t => t.FullName));
        Assert.True(types.Count(Hidden) >= 7, "the contract's types were not found");
    }

    [GeneratedRegex(@"`(?<name>I?[A-Z][A-Za-z]+)`")]
    private static partial Regex Backticked();
}
