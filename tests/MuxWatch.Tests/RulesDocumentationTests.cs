using System.Text.RegularExpressions;
using MuxWatch.Testing;

namespace MuxWatch.Tests;

/// <summary>
/// Each fact about the rules lives in one place, the code, and docs/diagnosis.md names it: the rules' order is
/// <c>TimeoutDiagnoser.Rules</c>, the order of equal weights <c>TimeoutDiagnoser.PriorityOrder</c>; the doc's table and
/// prose name each rule by its class (no rule numbers, which drifted between the code and the doc).
/// </summary>
public sealed class RulesDocumentationTests
{
    private static readonly string Doc = File.ReadAllText(Path.Combine(BuiltProgram.RepositoryRoot, "docs", "diagnosis.md"));

    [Fact]
    public void Every_rule_is_named_by_its_class_in_the_table_and_in_the_prose_in_the_order_it_runs()
    {
        var names = TimeoutDiagnoser.Rules.Select(rule => rule.GetType().Name).ToList();
        var table = Doc[Doc.IndexOf("| rule | cause |", StringComparison.Ordinal)..];
        table = table[..table.IndexOf("\n\n", StringComparison.Ordinal)];
        var firstColumn = string.Join("\n", table.Split('\n').Select(line => line.Split('|').ElementAtOrDefault(1) ?? string.Empty));
        Assert.All(names, name => Assert.Contains($"`{name}`", firstColumn, StringComparison.Ordinal));

        var prose = Doc[Doc.IndexOf("The rules run in this order", StringComparison.Ordinal)..];
        prose = prose[..prose.IndexOf("\n\n", StringComparison.Ordinal)];
        var positions = names.Select(name => prose.IndexOf($"`{name}`", StringComparison.Ordinal)).ToList();
        Assert.DoesNotContain(-1, positions);
        Assert.Equal(positions.Order(), positions);
    }

    [Fact]
    public void The_order_of_equal_weights_is_the_codes()
    {
        var said = Regex.Match(Doc, @"equal weights go by this order \(`TimeoutDiagnoser.PriorityOrder`\): (?<list>[^.]+)\.").Groups["list"].Value;
        var listed = Regex.Matches(said, "`([a-z-]+)`").Select(m => m.Groups[1].Value).ToList();
        Assert.Equal(TimeoutDiagnoser.PriorityOrder.Select(cause => cause.ToName()), listed);
    }

    [Fact]
    public void No_rule_carries_a_number_in_the_code()
    {
        var folder = Path.Combine(BuiltProgram.RepositoryRoot, "src", "MuxWatch", "Diagnosis");
        var numbered = Directory.EnumerateFiles(folder, "*.cs", SearchOption.AllDirectories)
            .SelectMany(file => File.ReadLines(file).Select(line => (file, line)))
            .Where(x => Regex.IsMatch(x.line, @"\b[Rr]ule \d+[a-z]?\b"))
            .Select(x => $"{Path.GetFileName(x.file)}: {x.line.Trim()}")
            .ToList();
        Assert.True(numbered.Count == 0, string.Join("\n", numbered));
    }
}
