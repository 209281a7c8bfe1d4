using System.ComponentModel.DataAnnotations;
using System.Globalization;
using System.Reflection;
using MuxWatch.Testing;

namespace MuxWatch.Tests;

/// <summary>
/// Each setting's bounds are said once, by the <see cref="RangeAttribute"/> on <see cref="MuxWatchOptions"/> (the validator
/// is generated from them): the README's table of settings states the same bounds, or this fails.
/// </summary>
public sealed class OptionsReferenceTests
{
    public static TheoryData<string> BoundedSettings() =>
        [.. typeof(MuxWatchOptions).GetProperties().Where(p => p.GetCustomAttribute<RangeAttribute>() is not null).Select(p => p.Name)];

    [Theory]
    [MemberData(nameof(BoundedSettings))]
    public void The_readme_states_each_settings_bounds_as_the_options_declare_them(string setting)
    {
        var range = typeof(MuxWatchOptions).GetProperty(setting)!.GetCustomAttribute<RangeAttribute>()!;
        var bounds = $"{Human(range.Minimum, range.OperandType)} to {Human(range.Maximum, range.OperandType)}";
        var row = File.ReadAllLines(Path.Combine(BuiltProgram.RepositoryRoot, "README.md"))
            .SingleOrDefault(line => line.StartsWith($"| `MuxWatch:{setting}` |", StringComparison.Ordinal));

        Assert.True(row is not null, $"the README's settings table has no row for MuxWatch:{setting}");
        Assert.True(row.Contains(bounds, StringComparison.Ordinal), $"MuxWatch:{setting} is bounded {bounds}; the README says: {row}");
    }

    [Fact]
    public void Every_bounded_setting_is_found()
    {
        Assert.True(BoundedSettings().Count >= 14);
    }

    /// <summary>A bound as the README writes it: 0, 10 ms, 1 s, 5 minutes, 1 hour, 1 day, 100000.</summary>
    private static string Human(object bound, Type type)
    {
        if (type != typeof(TimeSpan))
        {
            return Convert.ToString(bound, CultureInfo.InvariantCulture)!;
        }

        var span = TimeSpan.Parse((string)bound, CultureInfo.InvariantCulture);
        static string Unit(double count, string name) => string.Create(CultureInfo.InvariantCulture, $"{count} {name}{(count == 1 ? string.Empty : "s")}");
        return span switch
        {
            { Ticks: 0 } => "0",
            _ when span < TimeSpan.FromSeconds(1) => string.Create(CultureInfo.InvariantCulture, $"{span.TotalMilliseconds} ms"),
            _ when span < TimeSpan.FromMinutes(1) => string.Create(CultureInfo.InvariantCulture, $"{span.TotalSeconds} s"),
            _ when span < TimeSpan.FromHours(1) => Unit(span.TotalMinutes, "minute"),
            _ when span < TimeSpan.FromDays(1) => Unit(span.TotalHours, "hour"),
            _ => Unit(span.TotalDays, "day"),
        };
    }
}
