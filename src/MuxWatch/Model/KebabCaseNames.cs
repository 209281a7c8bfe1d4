using System.Text.Json;

namespace MuxWatch.Model;

/// <summary>The kebab-case names of an enum's values, computed once with the same policy the JSON converter uses.</summary>
/// <typeparam name="TEnum">An int-based enum whose values run from 0 without gaps.</typeparam>
internal static class KebabCaseNames<TEnum>
    where TEnum : struct, Enum
{
    private static readonly string[] Names =
        [.. Enum.GetValues<TEnum>().Select(value => JsonNamingPolicy.KebabCaseLower.ConvertName(value.ToString()))];

    /// <summary>The value's name; <paramref name="fallback"/> for a value outside the enum.</summary>
    public static string Of(TEnum value, string fallback)
    {
        // No boxing: this runs for every exported timeout. MuxWatch's enums are int-based.
        var index = System.Runtime.CompilerServices.Unsafe.BitCast<TEnum, int>(value);
        return (uint)index < (uint)Names.Length ? Names[index] : fallback;
    }
}
